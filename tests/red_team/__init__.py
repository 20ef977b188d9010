"""Red-team suite: adversarial vectors written from first principles, each pinned as a strict xfail while it leaks."""
