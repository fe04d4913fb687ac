// The invariants of mem_if's registers (included inside hw/rtl/mem_if.v under `ifdef FORMAL):
// the property monitor mem_if_props (hw/formal/mem_if.sv) watches the unit's ports and the AXI4
// rules' bookkeeping follows the port; these assertions tie both to the unit's queues, counts and
// buffers, so that k-induction cannot start from a state that no run reaches (a subordinate that
// never answers freezes them all, so without these an unreachable one could last any k cycles).

wire        f_past_valid, f_rdata_in, f_wdata_in, f_books_ok;
wire [7:0]  f_r_beats, f_rd_words, f_pushes, f_w_beats, f_n;
wire [31:0] f_rdata, f_wdata, f_aw_pending;
wire [35:0] f_w_pending;
wire [8:0]  f_reads_out, f_writes_open, f_aw_n, f_w_n, f_w_beat, f_wlast_n;

mem_if_props #(
    .READS_MAX (READS_MAX),
    .RBUF      (RBUF)
) f_props (
    .clk (clk), .rst (rst), .clear (clear), .stall (stall), .bus_err (bus_err),
    .rd_cmd (rd_cmd), .rd_addr (rd_addr), .rd_len (rd_len), .rd_valid (rd_valid),
    .rd_data (rd_data), .wr_cmd (wr_cmd), .wr_addr (wr_addr), .wr_len (wr_len),
    .wr_push (wr_push), .wr_data (wr_data), .fence (fence), .fence_done (fence_done),
    .arid (m_axi_arid), .araddr (m_axi_araddr), .arlen (m_axi_arlen), .arsize (m_axi_arsize),
    .arburst (m_axi_arburst), .arvalid (m_axi_arvalid), .arready (m_axi_arready),
    .rid (m_axi_rid), .rdata (m_axi_rdata), .rresp (m_axi_rresp), .rlast (m_axi_rlast),
    .rvalid (m_axi_rvalid), .rready (m_axi_rready), .awid (m_axi_awid),
    .awaddr (m_axi_awaddr), .awlen (m_axi_awlen), .awsize (m_axi_awsize),
    .awburst (m_axi_awburst), .awvalid (m_axi_awvalid), .awready (m_axi_awready),
    .wdata (m_axi_wdata), .wstrb (m_axi_wstrb), .wlast (m_axi_wlast), .wvalid (m_axi_wvalid),
    .wready (m_axi_wready), .bid (m_axi_bid), .bresp (m_axi_bresp), .bvalid (m_axi_bvalid),
    .bready (m_axi_bready),
    .f_past_valid (f_past_valid), .r_beats (f_r_beats), .rd_words (f_rd_words),
    .pushes (f_pushes), .w_beats (f_w_beats), .f_n (f_n), .f_rdata (f_rdata),
    .f_rdata_in (f_rdata_in), .f_wdata (f_wdata), .f_wdata_in (f_wdata_in),
    .reads_out (f_reads_out), .writes_open (f_writes_open), .aw_pending (f_aw_pending),
    .w_pending (f_w_pending), .aw_pending_n (f_aw_n), .w_pending_n (f_w_n),
    .w_beat_n (f_w_beat), .wlast_n (f_wlast_n), .books_ok (f_books_ok)
);

// a burst of 4-byte beats at a 4-byte aligned address inside one 4 KB page
function f_in_page;
    input [31:0] addr;
    input [7:0]  len;
    begin
        f_in_page = (addr[1:0] == 2'b00)
                    && ({1'b0, addr[11:0]} + {3'd0, len, 2'b00} + 13'd4 <= 13'h1000);
    end
endfunction

wire [7:0] f_r_off = f_n - f_rd_words;    // the followed word's place in the read buffer
wire [7:0] f_w_off = f_n - f_w_beats;     // .. in the write buffer

// the queues' entries: every stream queued has words; the AWs and W bursts the rules wait to pair
// are the unit's bursts in order (awlen + 1 beats each; those whose W has not ended are in wl_mem
// after the ended ones), and an AW still held is the newest burst
reg       f_queued_ok, f_pairs_ok;
reg [1:0] f_k;
integer   f_i;
always @(*) begin
    f_queued_ok = 1'b1;
    f_pairs_ok  = 1'b1;
    for (f_i = 0; f_i < CMDQ; f_i = f_i + 1) begin
        f_k = f_i[1:0];
        if ({29'd0, rq_count_reg} > f_i && rq_mem[rq_head_reg + f_k][15:0] == 16'd0)
            f_queued_ok = 1'b0;
        if ({29'd0, wq_count_reg} > f_i && wq_mem[wq_head_reg + f_k][15:0] == 16'd0)
            f_queued_ok = 1'b0;
        if ({23'd0, f_aw_n} > f_i) begin
            if ({23'd0, f_w_n} > f_i) begin
                if (f_w_pending[9*f_i +: 9] != {1'b0, f_aw_pending[8*f_i +: 8]} + 9'd1)
                    f_pairs_ok = 1'b0;
            end else if (wl_mem[wl_head_reg + f_k - f_w_n[1:0]] != f_aw_pending[8*f_i +: 8]) begin
                f_pairs_ok = 1'b0;
            end
        end
    end
    if (m_axi_awvalid_reg) begin
        if (f_w_n == f_aw_n + 9'd1) begin
            if (f_w_pending[9*f_aw_n[1:0] +: 9] != {1'b0, m_axi_awlen_reg} + 9'd1)
                f_pairs_ok = 1'b0;
        end else if (wl_mem[wl_head_reg + f_aw_n[1:0] - f_w_n[1:0]] != m_axi_awlen_reg) begin
            f_pairs_ok = 1'b0;
        end
    end
end

always @(*) begin
    if (f_past_valid && !rst) begin
        // the rules' own queues consistent (pointers and counts)
        I_BOOKS: assert (f_books_ok);
        // the command queues: pointers and counts agree, every stream queued has words
        I_QUEUES: assert (rq_count_reg <= CMDQ[2:0]
                          && rq_tail_reg == rq_head_reg + rq_count_reg[1:0]
                          && wq_count_reg <= CMDQ[2:0]
                          && wq_tail_reg == wq_head_reg + wq_count_reg[1:0] && f_queued_ok);
        // the AR and AW registers hold a burst that stays in its 4 KB page
        I_AR_PAGE: assert (f_in_page(m_axi_araddr_reg, m_axi_arlen_reg));
        I_AW_PAGE: assert (f_in_page(m_axi_awaddr_reg, m_axi_awlen_reg));
        // reads: the unit counts from the AR's issue, the rules from its handshake
        I_READS: assert (reads_out_reg == f_reads_out + {8'd0, m_axi_arvalid_reg}
                         && reads_out_reg <= READS_MAX[8:0]);
        // the read buffer holds the R beats taken and not delivered, the followed word in place
        I_RBUF: assert (rb_count_reg <= RBUF[RB_AW:0]
                        && rb_tail_reg == rb_head_reg + rb_count_reg[RB_AW-1:0]
                        && {{(7-RB_AW){1'b0}}, rb_count_reg} == f_r_beats - f_rd_words);
        if ({{(7-RB_AW){1'b0}}, rb_count_reg} > f_r_off) begin
            I_RBUF_WORD: assert (f_rdata_in
                                 && rb_mem[rb_head_reg + f_r_off[RB_AW-1:0]] == f_rdata);
        end
        // the write buffer holds the words pushed and not sent, the followed word in place
        I_WBUF: assert (wb_count_reg <= WBUF[WB_AW:0]
                        && wb_tail_reg == wb_head_reg + wb_count_reg[WB_AW-1:0]
                        && {{(7-WB_AW){1'b0}}, wb_count_reg} == f_pushes - f_w_beats);
        if ({{(7-WB_AW){1'b0}}, wb_count_reg} > f_w_off) begin
            I_WBUF_WORD: assert (f_wdata_in
                                 && wb_mem[wb_head_reg + f_w_off[WB_AW-1:0]] == f_wdata);
        end
        // writes: the unit counts from the AW's issue to its B; of those, the bursts whose W
        // has not ended are in wl_mem, the others are the rules' W bursts not answered
        I_WRITES: assert ({1'b0, writes_out_reg} == {1'b0, f_writes_open}
                                                     + {9'd0, m_axi_awvalid_reg}
                          && {1'b0, writes_out_reg} == {7'd0, wl_count_reg} + {1'b0, f_wlast_n});
        I_WL: assert (wl_count_reg <= CMDQ[2:0] && wl_tail_reg == wl_head_reg + wl_count_reg[1:0]);
        // the W burst in progress: its beats so far, within its awlen
        I_W_BEAT: assert (f_w_beat == {1'b0, w_beat_reg}
                          && (wl_count_reg == 3'd0 ? w_beat_reg == 8'd0
                                                   : w_beat_reg <= wl_mem[wl_head_reg]));
        // AWs (with the one held) and W bursts (with those not ended) are the same bursts
        I_PAIRS: assert (f_aw_n + {8'd0, m_axi_awvalid_reg} == f_w_n + {6'd0, wl_count_reg}
                         && f_pairs_ok);
    end
end
