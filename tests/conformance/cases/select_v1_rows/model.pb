
.
cPlaceholder*
dtype0
*
shape:
2
tPlaceholder*
dtype0*
shape
:
2
ePlaceholder*
dtype0*
shape
:

zSelectcte*
T0"ª