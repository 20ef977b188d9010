"""Text rules shared by every part that decides what a user may read: one normalization, and what wording says."""
