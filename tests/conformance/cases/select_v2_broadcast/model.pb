
.
cPlaceholder*
dtype0
*
shape:
2
tPlaceholder*
dtype0*
shape
:
.
ePlaceholder*
dtype0*
shape:

zSelectV2cte*
T0"ª