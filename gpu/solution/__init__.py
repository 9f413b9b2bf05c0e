"""The solution level (Bożejko et al.): one solution's makespan over a block (makespan.py) and
`--algorithm sample --backend gpu` (sampling.py)."""
