"""Reports: summary.md, report.html and its views, the comparison's terminal lines."""
