; fusegrad x86-64 kernel symbolic_end
symbolic_end:
     0: 53                             push rbx
     1: 4883ec20                       sub rsp, 0x20
     5: 48893c24                       mov qword ptr [rsp], rdi
     9: 4889742408                     mov qword ptr [rsp + 8], rsi
     e: 4889542410                     mov qword ptr [rsp + 0x10], rdx
    13: 488b3424                       mov rsi, qword ptr [rsp]
    17: 488b7c2408                     mov rdi, qword ptr [rsp + 8]
    1c: 4c63442410                     movsxd r8, dword ptr [rsp + 0x10]
    21: 41b900000000                   mov r9d, 0
.Lloop1:
    27: 4d39c1                         cmp r9, r8
    2a: 0f8d1a000000                   jge .Lexit2
    30: 4a631c8e                       movsxd rbx, dword ptr [rsi + r9*4]
    34: 4889db                         mov rbx, rbx
    37: 4401c3                         add ebx, r8d
    3a: 4863db                         movsxd rbx, ebx
    3d: 42891c8f                       mov dword ptr [rdi + r9*4], ebx
    41: 4983c101                       add r9, 1
    45: e9ddffffff                     jmp .Lloop1
.Lexit2:
    4a: 4883c420                       add rsp, 0x20
    4e: 5b                             pop rbx
    4f: c3                             ret
