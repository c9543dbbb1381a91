"""The one-machine test cluster (see cluster.py); `python -m tests.cluster up|down|status`."""
from .cluster import Cluster, ClusterError, default_dir, missing_tools
from .nodes import Node

__all__ = ["Cluster", "ClusterError", "Node", "default_dir", "missing_tools"]
