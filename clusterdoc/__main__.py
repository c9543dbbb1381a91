from clusterdoc.cli import main

raise SystemExit(main())
