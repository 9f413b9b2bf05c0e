"""What every resident engine runs on: the queue and chunks (chunks.py), launches (launch.py),
PTX intrinsics (intrinsics.py) and thread block clusters (cluster.py)."""
