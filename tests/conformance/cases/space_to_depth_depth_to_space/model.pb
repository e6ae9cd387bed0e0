
:
xPlaceholder*
dtype0*
shape:
H
s2dSpaceToDepthx*
T0*

block_size*
data_formatNHWC
:
yPlaceholder*
dtype0*
shape:
H
d2sDepthToSpacey*
T0*

block_size*
data_formatNHWC"ª