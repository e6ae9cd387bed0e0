
.
xPlaceholder*
dtype0*
shape:

eErfcx*
T0"ª