"""Claude Code transcripts, under the name toolpair 0.1 documented.

The reader lives with the other agents' session formats, in
`toolpair.sessions.claude_code`; this name is the same module object."""

import sys

from toolpair.sessions import claude_code

sys.modules[__name__] = claude_code
