
.
xPlaceholder*
dtype0*
shape:

zSigmoidx*
T0"ª