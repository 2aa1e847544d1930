"""Boolean rule sets by column generation (Dash, Guenluek and Wei, NeurIPS 2018) on HiGHS."""
