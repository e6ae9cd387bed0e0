
2
xPlaceholder*
dtype0*
shape
:

yIdentityx*
T0"ª