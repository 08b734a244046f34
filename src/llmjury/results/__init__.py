"""From verdicts to figures: aggregation, gates, the Decision, comparisons with a baseline, repairs and
agreement."""
