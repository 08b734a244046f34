"""Anytime-valid decisions: confidence sequences for bounded means and the seeded order cases are
judged in, so a gate may be looked at after every batch and a run may stop once it is decided."""
