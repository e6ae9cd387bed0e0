
0
b32Placeholder*
dtype0*
shape:
0
e32Placeholder*
dtype0*
shape:

p32Powb32e32*
T0
0
b64Placeholder*
dtype0	*
shape:
0
e64Placeholder*
dtype0	*
shape:

p64Powb64e64*
T0	"ª