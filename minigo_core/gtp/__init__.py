"""The protocols a model serves: GTP with GUI analysis and clocks, and KataGo's analysis protocol."""
