"""Files both ways: GraphDefs, SavedModels, checkpoints, external weights, frozen graphs."""
