"""Project-wide pytest set-up for the eval suite and the tests.

deepeval ships a pytest plugin that loads in every session and reports telemetry; pyproject's
`addopts` blocks the plugin (`-p no:deepeval`) and these switches keep anything that imports
deepeval (the deepeval bridge and its tests) offline and from writing files.
"""

import os

for variable, value in (("DEEPEVAL_TELEMETRY_OPT_OUT", "1"), ("DEEPEVAL_DISABLE_DOTENV", "1"),
                        ("DEEPEVAL_FILE_SYSTEM", "READ_ONLY"), ("ERROR_REPORTING", "0")):
    os.environ.setdefault(variable, value)
