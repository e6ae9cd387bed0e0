
.
aPlaceholder*
dtype0*
shape:
.
bPlaceholder*
dtype0*
shape:

fdFloorDivab*
T0
/
a2Placeholder*
dtype0*
shape:
/
b2Placeholder*
dtype0*
shape:

fmFloorModa2b2*
T0
/
a3Placeholder*
dtype0*
shape:
/
b3Placeholder*
dtype0*
shape:

divDiva3b3*
T0"ª