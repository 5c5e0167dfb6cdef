¥%
"serve´$
.
xPlaceholder*
dtype0*
shape:
D
callPartitionedCallx*
fR
f0*
Tin
2*
Tout
2»#
Û

f0
a
zB
c1PartitionedCalla*
fR
f1*
Tin
2*
Tout
2B
c2PartitionedCalla*
fR
f1*
Tin
2*
Tout
2/
addAddV2c1:output:0c2:output:0*
T0"
zadd:z:0
Û

f1
a
zB
c1PartitionedCalla*
fR
f2*
Tin
2*
Tout
2B
c2PartitionedCalla*
fR
f2*
Tin
2*
Tout
2/
addAddV2c1:output:0c2:output:0*
T0"
zadd:z:0
Û

f2
a
zB
c1PartitionedCalla*
fR
f3*
Tin
2*
Tout
2B
c2PartitionedCalla*
fR
f3*
Tin
2*
Tout
2/
addAddV2c1:output:0c2:output:0*
T0"
zadd:z:0
Û

f3
a
zB
c1PartitionedCalla*
fR
f4*
Tin
2*
Tout
2B
c2PartitionedCalla*
fR
f4*
Tin
2*
Tout
2/
addAddV2c1:output:0c2:output:0*
T0"
zadd:z:0
Û

f4
a
zB
c1PartitionedCalla*
fR
f5*
Tin
2*
Tout
2B
c2PartitionedCalla*
fR
f5*
Tin
2*
Tout
2/
addAddV2c1:output:0c2:output:0*
T0"
zadd:z:0
Û

f5
a
zB
c1PartitionedCalla*
fR
f6*
Tin
2*
Tout
2B
c2PartitionedCalla*
fR
f6*
Tin
2*
Tout
2/
addAddV2c1:output:0c2:output:0*
T0"
zadd:z:0
Û

f6
a
zB
c1PartitionedCalla*
fR
f7*
Tin
2*
Tout
2B
c2PartitionedCalla*
fR
f7*
Tin
2*
Tout
2/
addAddV2c1:output:0c2:output:0*
T0"
zadd:z:0
Û

f7
a
zB
c1PartitionedCalla*
fR
f8*
Tin
2*
Tout
2B
c2PartitionedCalla*
fR
f8*
Tin
2*
Tout
2/
addAddV2c1:output:0c2:output:0*
T0"
zadd:z:0
Û

f8
a
zB
c1PartitionedCalla*
fR
f9*
Tin
2*
Tout
2B
c2PartitionedCalla*
fR
f9*
Tin
2*
Tout
2/
addAddV2c1:output:0c2:output:0*
T0"
zadd:z:0
Ý

f9
a
zC
c1PartitionedCalla*
fR
f10*
Tin
2*
Tout
2C
c2PartitionedCalla*
fR
f10*
Tin
2*
Tout
2/
addAddV2c1:output:0c2:output:0*
T0"
zadd:z:0
Þ

f10
a
zC
c1PartitionedCalla*
fR
f11*
Tin
2*
Tout
2C
c2PartitionedCalla*
fR
f11*
Tin
2*
Tout
2/
addAddV2c1:output:0c2:output:0*
T0"
zadd:z:0
Þ

f11
a
zC
c1PartitionedCalla*
fR
f12*
Tin
2*
Tout
2C
c2PartitionedCalla*
fR
f12*
Tin
2*
Tout
2/
addAddV2c1:output:0c2:output:0*
T0"
zadd:z:0
Þ

f12
a
zC
c1PartitionedCalla*
fR
f13*
Tin
2*
Tout
2C
c2PartitionedCalla*
fR
f13*
Tin
2*
Tout
2/
addAddV2c1:output:0c2:output:0*
T0"
zadd:z:0
Þ

f13
a
zC
c1PartitionedCalla*
fR
f14*
Tin
2*
Tout
2C
c2PartitionedCalla*
fR
f14*
Tin
2*
Tout
2/
addAddV2c1:output:0c2:output:0*
T0"
zadd:z:0
Þ

f14
a
zC
c1PartitionedCalla*
fR
f15*
Tin
2*
Tout
2C
c2PartitionedCalla*
fR
f15*
Tin
2*
Tout
2/
addAddV2c1:output:0c2:output:0*
T0"
zadd:z:0
Þ

f15
a
zC
c1PartitionedCalla*
fR
f16*
Tin
2*
Tout
2C
c2PartitionedCalla*
fR
f16*
Tin
2*
Tout
2/
addAddV2c1:output:0c2:output:0*
T0"
zadd:z:0
Þ

f16
a
zC
c1PartitionedCalla*
fR
f17*
Tin
2*
Tout
2C
c2PartitionedCalla*
fR
f17*
Tin
2*
Tout
2/
addAddV2c1:output:0c2:output:0*
T0"
zadd:z:0
Þ

f17
a
zC
c1PartitionedCalla*
fR
f18*
Tin
2*
Tout
2C
c2PartitionedCalla*
fR
f18*
Tin
2*
Tout
2/
addAddV2c1:output:0c2:output:0*
T0"
zadd:z:0
Þ

f18
a
zC
c1PartitionedCalla*
fR
f19*
Tin
2*
Tout
2C
c2PartitionedCalla*
fR
f19*
Tin
2*
Tout
2/
addAddV2c1:output:0c2:output:0*
T0"
zadd:z:0
Þ

f19
a
zC
c1PartitionedCalla*
fR
f20*
Tin
2*
Tout
2C
c2PartitionedCalla*
fR
f20*
Tin
2*
Tout
2/
addAddV2c1:output:0c2:output:0*
T0"
zadd:z:0
A

f20
a
z
mIdentitya*
T0"
z
m:output:0*c
serving_defaultP

x
x:0
y
call:0ÿÿÿÿÿÿÿÿÿtensorflow/serving/predict