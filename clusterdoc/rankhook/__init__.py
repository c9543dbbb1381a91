"""The start-up hook a user's own batch script's job gets on PYTHONPATH (sitecustomize.py; a package only so that
the file ships with clusterdoc: slurm.batch_env copies it into the job folder, nothing imports it from here)."""
