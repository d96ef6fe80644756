"""`python -m podstart_cli`: the same as the `podstart` command."""

from podstart_cli.main import run

if __name__ == "__main__":
    run()
