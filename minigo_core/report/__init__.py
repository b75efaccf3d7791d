"""Layer 7, reports of a run, read from its files alone: ratings and time to target (`ratings`), every plot
(`plots`: the one module that imports matplotlib), the status table (`status`), the live progress line
(`progress`), a game or model file as text (`inspect`), the fixed-scale ratings a run wrote (`fixed_scale`),
where its core-seconds went (`breakdown`), its scalars for TensorBoard (`tensorboard`, in the events file
format of `tfevents`).

No module here plays a game (tests/unit/test_architecture.py): playing is `search`'s, and rating on the
fixed Elo ladder `rating`'s.
"""
