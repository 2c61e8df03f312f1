"""The chip: its figures and calibrated rates (`target`) and the one cost model (`cost_model`)."""
