"""The ablation: a spec's rows as real runs, rated on the fixed Elo ladder and tabulated (bench ablation)."""
