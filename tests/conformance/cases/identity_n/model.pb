
.
aPlaceholder*
dtype0*
shape:
.
bPlaceholder*
dtype0	*
shape:
!
n	IdentityNab*
T
2	"ª