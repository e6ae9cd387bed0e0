
.
xPlaceholder*
dtype0*
shape:

zSignx*
T0
.
dPlaceholder*
dtype0*
shape:

zdSignd*
T0
.
nPlaceholder*
dtype0	*
shape:

znSignn*
T0	"ª