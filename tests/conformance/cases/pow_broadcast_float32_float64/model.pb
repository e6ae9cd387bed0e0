
2
xPlaceholder*
dtype0*
shape
:
.
yPlaceholder*
dtype0*
shape:

zPowxy*
T0
0
x64Placeholder*
dtype0*
shape:
0
y64Placeholder*
dtype0*
shape:

z64Powx64y64*
T0"ª