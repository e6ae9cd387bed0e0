
6
gPlaceholder*
dtype0*
shape:
.
vPlaceholder*
dtype0*
shape:
4
dbBiasAddGradg*
T0*
data_formatNHWC
8
shapesShapeNgv*
N*
T0*
out_type0"ª