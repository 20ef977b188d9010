"""What several test suites share, imported as ``tests.support.<module>``.

- ``serve``: the real ``diagnosis serve`` as a subprocess on a free loopback port, awaited until SERVING;
- ``api``: the real server in-process (``start_server``) with async stubs on a channel to it;
- ``settings``: settings for tests, and an environment with none of the shell's variables;
- ``fakes``: a deterministic provider whose every run ends SUCCESS, and its one-tool toolset;
- ``rpc``: google.rpc details of a failed call, reading streams, ``eventually``;
- ``postgres``: a throwaway PostgreSQL cluster in a temporary folder;
- ``slow_serve``: ``diagnosis serve`` with slowed-down agents (run as a script by ``serve``).

The root ``tests/conftest.py`` holds the fixtures every suite may use (``repository``).
"""
