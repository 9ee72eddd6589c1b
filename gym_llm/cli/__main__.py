"""``python -m gym_llm.cli``: the same as the ``gym-llm`` command."""

import sys

from gym_llm.cli import main

sys.exit(main())
