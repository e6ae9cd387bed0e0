
:
xPlaceholder*
dtype0*
shape:
m
sameAvgPoolx*
T0*
data_formatNHWC*
ksize
*
paddingSAME*
strides

;
x2Placeholder*
dtype0*
shape:
p
validAvgPoolx2*
T0*
data_formatNHWC*
ksize
*
paddingVALID*
strides
"ª