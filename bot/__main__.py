"""`python -m bot` is the same as `kb`."""

from bot.cli import main

main()
