; fusegrad x86-64 kernel mulacc_float64
mulacc_float64:
     0: 53                             push rbx
     1: 55                             push rbp
     2: 4881ecd8000000                 sub rsp, 0xd8
     9: 48893c24                       mov qword ptr [rsp], rdi
     d: 4889742408                     mov qword ptr [rsp + 8], rsi
    12: 4889542410                     mov qword ptr [rsp + 0x10], rdx
    17: 48894c2418                     mov qword ptr [rsp + 0x18], rcx
    1c: 4c89442420                     mov qword ptr [rsp + 0x20], r8
    21: 4c894c2428                     mov qword ptr [rsp + 0x28], r9
    26: 488b3424                       mov rsi, qword ptr [rsp]
    2a: 488b7c2408                     mov rdi, qword ptr [rsp + 8]
    2f: 4c8b442410                     mov r8, qword ptr [rsp + 0x10]
    34: 4c8b4c2418                     mov r9, qword ptr [rsp + 0x18]
    39: bb00000000                     mov ebx, 0
.Lloop1:
    3e: 4883fb0c                       cmp rbx, 0xc
    42: 0f8d24000000                   jge .Lexit2
    48: c5fb1004de                     vmovsd xmm0, qword ptr [rsi + rbx*8]
    4d: c5fb100cdf                     vmovsd xmm1, qword ptr [rdi + rbx*8]
    52: c4c17b1014d8                   vmovsd xmm2, qword ptr [r8 + rbx*8]
    58: c4e2f9b9d1                     vfmadd231sd xmm2, xmm0, xmm1
    5d: c4c17b1114d9                   vmovsd qword ptr [r9 + rbx*8], xmm2
    63: 4883c301                       add rbx, 1
    67: e9d2ffffff                     jmp .Lloop1
.Lexit2:
    6c: 4c8b4c2420                     mov r9, qword ptr [rsp + 0x20]
    71: bb00000000                     mov ebx, 0
.Lloop3:
    76: 4883fb03                       cmp rbx, 3
    7a: 0f8d2a000000                   jge .Lexit4
    80: 6beb04                         imul ebp, ebx, 4
    83: 4863ed                         movsxd rbp, ebp
    86: c5fc1004ee                     vmovups ymm0, ymmword ptr [rsi + rbp*8]
    8b: c5fc100cef                     vmovups ymm1, ymmword ptr [rdi + rbp*8]
    90: c4c17c1014e8                   vmovups ymm2, ymmword ptr [r8 + rbp*8]
    96: c4e2fdb8d1                     vfmadd231pd ymm2, ymm0, ymm1
    9b: c4c17c1114e9                   vmovups ymmword ptr [r9 + rbp*8], ymm2
    a1: 4883c301                       add rbx, 1
    a5: e9ccffffff                     jmp .Lloop3
.Lexit4:
    aa: 4c8b442428                     mov r8, qword ptr [rsp + 0x28]
    af: c5fb100549000000               vmovsd xmm0, qword ptr [rip + .LC0]
    b7: 41b900000000                   mov r9d, 0
.Lloop5:
    bd: 4983f90c                       cmp r9, 0xc
    c1: 0f8d1a000000                   jge .Lexit6
    c7: c4a17b100cce                   vmovsd xmm1, qword ptr [rsi + r9*8]
    cd: c4a17b1014cf                   vmovsd xmm2, qword ptr [rdi + r9*8]
    d3: c4e2f1b9c2                     vfmadd231sd xmm0, xmm1, xmm2
    d8: 4983c101                       add r9, 1
    dc: e9dcffffff                     jmp .Lloop5
.Lexit6:
    e1: c4c17b1100                     vmovsd qword ptr [r8], xmm0
    e6: c5f877                         vzeroupper
    e9: 4881c4d8000000                 add rsp, 0xd8
    f0: 5d                             pop rbp
    f1: 5b                             pop rbx
    f2: c3                             ret
    f3: cccccccccccccccccccccccccc     ; padding
.LC0:
   100: 0000000000000000000000000000000000000000000000000000000000000000 ; f32 0.0 / f64 0.0
