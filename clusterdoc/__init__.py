"""clusterdoc: a doctor for distributed PyTorch training on SLURM/MPI clusters."""

__version__ = "0.1.0"
