
2
aPlaceholder*
dtype0	*
shape
:

z	ZerosLikea*
T0	
.
bPlaceholder*
dtype0*
shape:

oOnesLikeb*
T0"ª