
1
s0_0Placeholder*
dtype0	*
shape:
1
s1_0Placeholder*
dtype0	*
shape:
4
args_0BroadcastGradientArgss0_0s1_0*
T0	
1
s0_1Placeholder*
dtype0*
shape:
1
s1_1Placeholder*
dtype0*
shape:
4
args_1BroadcastGradientArgss0_1s1_1*
T0
1
s0_2Placeholder*
dtype0	*
shape:
1
s1_2Placeholder*
dtype0	*
shape:
4
args_2BroadcastGradientArgss0_2s1_2*
T0	"ª