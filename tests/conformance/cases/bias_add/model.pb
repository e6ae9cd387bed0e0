
:
xPlaceholder*
dtype0*
shape:
.
bPlaceholder*
dtype0*
shape:
2
yBiasAddxb*
T0*
data_formatNHWC
3
xiPlaceholder*
dtype0*
shape
:
/
biPlaceholder*
dtype0*
shape:
5
yiBiasAddxibi*
T0*
data_formatNHWC"ª