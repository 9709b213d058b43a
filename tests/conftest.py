"""The test suite verifies the IR after every pass of every compile (`FUSION_VERIFY_EACH`, which
the tools and tests it starts inherit); users' compiles verify input and result only."""

import os

os.environ["FUSION_VERIFY_EACH"] = "1"
