
2
xPlaceholder*
dtype0*
shape
:

zL2Lossx*
T0"ª