"""xDSL dialect definitions of ktir, one file per dialect."""
