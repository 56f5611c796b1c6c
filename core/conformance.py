"""The conformance suite every integration runs, under its public name.

The suite lives with the rest of the testing kit, in `toolpair.testing.conformance`;
this name is the same module object, so that ``toolpair.conformance.X`` and
``toolpair.testing.conformance.X`` can never differ."""

import sys

from toolpair.testing import conformance

sys.modules[__name__] = conformance
