
.
aPlaceholder*
dtype0*
shape:

.
bPlaceholder*
dtype0*
shape:

#
floordivFloorDivab*
T0
!
fdIdentityfloordiv*
T0

modFloorModab*
T0

fmIdentitymod*
T0

divDivab*
T0
/
uaPlaceholder*
dtype0*
shape:
/
ubPlaceholder*
dtype0*
shape:
 
ufdFloorDivuaub*
T0
0
ua2Placeholder*
dtype0*
shape:
0
ub2Placeholder*
dtype0*
shape:
"
ufmFloorModua2ub2*
T0"ª