
.
xPlaceholder*
dtype0	*
shape:

yStopGradientx*
T0	"ª