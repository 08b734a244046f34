"""The evaluation suite's shared settings live in pyproject.toml ([tool.pytest.ini_options])."""
