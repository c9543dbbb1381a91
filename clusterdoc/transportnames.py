"""The names `--transport` accepts. Here, not in doctor/transports (which re-exports them), so that the command
line's parser lists them without importing paramiko and every transport: that was 0.14 s of every command's start,
`why --log` on a 300 MB file included (docs/benchmarks.md)."""

CHOICES = ("ssh", "srun", "auto")  # what --transport accepts; local and saved follow from --local and --facts
