; fusegrad x86-64 kernel mulacc_float64
mulacc_float64:
     0: 53                             push rbx
     1: 4883ec30                       sub rsp, 0x30
     5: 48893c24                       mov qword ptr [rsp], rdi
     9: 4889742408                     mov qword ptr [rsp + 8], rsi
     e: 4889542410                     mov qword ptr [rsp + 0x10], rdx
    13: 48894c2418                     mov qword ptr [rsp + 0x18], rcx
    18: 4c89442420                     mov qword ptr [rsp + 0x20], r8
    1d: 488b3424                       mov rsi, qword ptr [rsp]
    21: 488b7c2408                     mov rdi, qword ptr [rsp + 8]
    26: 4c8b442410                     mov r8, qword ptr [rsp + 0x10]
    2b: 4c8b4c2418                     mov r9, qword ptr [rsp + 0x18]
    30: bb00000000                     mov ebx, 0
.Lloop1:
    35: 4883fb0c                       cmp rbx, 0xc
    39: 0f8d28000000                   jge .Lexit2
    3f: c5fb1004de                     vmovsd xmm0, qword ptr [rsi + rbx*8]
    44: c5fb100cdf                     vmovsd xmm1, qword ptr [rdi + rbx*8]
    49: c4c17b1014d8                   vmovsd xmm2, qword ptr [r8 + rbx*8]
    4f: c5f828d2                       vmovaps xmm2, xmm2
    53: c4e2f9b9d1                     vfmadd231sd xmm2, xmm0, xmm1
    58: c4c17b1114d9                   vmovsd qword ptr [r9 + rbx*8], xmm2
    5e: 4883c301                       add rbx, 1
    62: e9ceffffff                     jmp .Lloop1
.Lexit2:
    67: 4c8b442420                     mov r8, qword ptr [rsp + 0x20]
    6c: c5fb10054c000000               vmovsd xmm0, qword ptr [rip + .LC0]
    74: 41b900000000                   mov r9d, 0
.Lloop3:
    7a: 4983f90c                       cmp r9, 0xc
    7e: 0f8d26000000                   jge .Lexit4
    84: c4a17b100cce                   vmovsd xmm1, qword ptr [rsi + r9*8]
    8a: c4a17b1014cf                   vmovsd xmm2, qword ptr [rdi + r9*8]
    90: c5f828d8                       vmovaps xmm3, xmm0
    94: c5f828db                       vmovaps xmm3, xmm3
    98: c4e2f1b9da                     vfmadd231sd xmm3, xmm1, xmm2
    9d: c5f828c3                       vmovaps xmm0, xmm3
    a1: 4983c101                       add r9, 1
    a5: e9d0ffffff                     jmp .Lloop3
.Lexit4:
    aa: c5f828c0                       vmovaps xmm0, xmm0
    ae: c4c17b1100                     vmovsd qword ptr [r8], xmm0
    b3: 4883c430                       add rsp, 0x30
    b7: 5b                             pop rbx
    b8: c3                             ret
    b9: cccccccccccccc                 ; padding
.LC0:
    c0: 0000000000000000000000000000000000000000000000000000000000000000 ; f32 0.0 / f64 0.0
