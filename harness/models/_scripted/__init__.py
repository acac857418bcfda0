"""The scripted model: steps, reading steps from data, and the model that plays them."""
