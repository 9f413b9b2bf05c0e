"""Problem device adapters of the resident engine: on-chip state, move costs, moves, tabu attributes."""
