"""Model answers played from our prompts on real incidents, replayed through the real graph (issue 28's measure).

``cases/<incident>.json`` holds, per incident of ``tests/incidents``, the recorded outputs of the tools the plan
calls (run on the incident's pack) and three variants of the four agents' answers: ``honest`` (every claim true,
bound as the Executor prompt asks), ``typical`` (every claim still true, written with the imperfections real models
show) and ``untrue`` (exactly one claim subtly false). Each claim is marked true or untrue, and the claim that
states the cause is named. ``python -m tests.eval_models.make_cases`` writes the case files;
``python -m tests.eval_models`` (``make eval-models``) replays them and writes ``var/eval-models/summary.json``.
"""
