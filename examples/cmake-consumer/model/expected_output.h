// Written by make_tiny_mlp.py: tiny_mlp's output for x[i] = 0.25 * i - 1, in double precision.
static const double kExpectedOutput[3] = {0.151275499026, 0.210159400931, 0.638565100043};
